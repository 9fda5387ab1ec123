build-asan/obj/kb/kb.o: kb/kb.c kb/expr.h kb/kb_internal.h kb/kb.h
kb/expr.h:
kb/kb_internal.h:
kb/kb.h:
