# packaging: the agent's systemd unit template is compiled into the library
# as one NUL-terminated text, the symbol td_service_unit_template, so that
# `topdown install-service` writes exactly the unit that `make install`
# ships (packaging/topdown-agent.service.in is the one source of both).
# Included by the main Makefile, which defines OUT, LIB, LIB_OBJS, CC and
# CFLAGS first.

SERVICE_TEMPLATE := packaging/topdown-agent.service.in
SERVICE_TEMPLATE_ASM := $(OUT)/service_template.S
SERVICE_TEMPLATE_OBJ := $(OUT)/obj/packaging/service_template.o

$(SERVICE_TEMPLATE_ASM): $(SERVICE_TEMPLATE) packaging/packaging.mk
	@mkdir -p $(@D)
	@{ printf '\t.section .rodata\n\t.global td_service_unit_template\n'; \
	   printf '\t.type td_service_unit_template, %%object\ntd_service_unit_template:\n'; \
	   printf '\t.incbin "%s"\n\t.byte 0\n' $(SERVICE_TEMPLATE); \
	   printf '\t.size td_service_unit_template, . - td_service_unit_template\n'; \
	   printf '\t.section .note.GNU-stack,"",%%progbits\n'; } > $@

# .incbin paths are relative to the project root, where make runs.
$(SERVICE_TEMPLATE_OBJ): $(SERVICE_TEMPLATE_ASM) $(SERVICE_TEMPLATE)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

LIB_OBJS += $(SERVICE_TEMPLATE_OBJ)
$(LIB): $(SERVICE_TEMPLATE_OBJ)
