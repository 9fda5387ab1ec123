# kb: the definition files under kb/defs/ are compiled into the library as
# one NUL-terminated text, the symbol td_kb_defs.  Each file is preceded by
# a "file PATH" line so that load errors name the file and line.
# Included by the main Makefile, which defines OUT, LIB, LIB_OBJS, CC and
# CFLAGS first.

KB_DEFS := $(sort $(wildcard kb/defs/*.def))
KB_DEFS_ASM := $(OUT)/kb_defs.S
KB_DEFS_OBJ := $(OUT)/obj/kb/defs.o

$(KB_DEFS_ASM): $(KB_DEFS) kb/kb.mk
	@mkdir -p $(@D)
	@{ printf '\t.section .rodata\n\t.global td_kb_defs\n'; \
	   printf '\t.type td_kb_defs, %%object\ntd_kb_defs:\n'; \
	   for f in $(KB_DEFS); do \
		printf '\t.ascii "file %s\\n"\n\t.incbin "%s"\n\t.ascii "\\n"\n' $$f $$f; \
	   done; \
	   printf '\t.byte 0\n\t.size td_kb_defs, . - td_kb_defs\n'; \
	   printf '\t.section .note.GNU-stack,"",%%progbits\n'; } > $@

# .incbin paths are relative to the project root, where make runs.
$(KB_DEFS_OBJ): $(KB_DEFS_ASM) $(KB_DEFS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

LIB_OBJS += $(KB_DEFS_OBJ)
$(LIB): $(KB_DEFS_OBJ)
