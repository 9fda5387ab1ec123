# kb: the definition files under kb/defs/ are compiled into the library as
# one text, the symbol td_kb_defs (embed_text in the Makefile). Each file is
# preceded by a "file PATH" line so that load errors name the file and line.

KB_DEFS := $(sort $(wildcard kb/defs/*.def))

$(OUT)/embed/kb_defs.S: $(KB_DEFS) kb/kb.mk Makefile
	$(call embed_text,td_kb_defs,$(KB_DEFS),file)

LIB_OBJS += $(OUT)/obj/embed/kb_defs.o
$(LIB): $(OUT)/obj/embed/kb_defs.o
