# packaging: the agent's systemd unit template is compiled into the library
# as one text, the symbol td_service_unit_template (embed_text in the
# Makefile), so that `topdown install-service` writes exactly the unit that
# `make install` ships: packaging/topdown-agent.service.in is the one source
# of both.

SERVICE_TEMPLATE := packaging/topdown-agent.service.in

$(OUT)/embed/service_template.S: $(SERVICE_TEMPLATE) packaging/packaging.mk Makefile
	$(call embed_text,td_service_unit_template,$(SERVICE_TEMPLATE))

LIB_OBJS += $(OUT)/obj/embed/service_template.o
$(LIB): $(OUT)/obj/embed/service_template.o
