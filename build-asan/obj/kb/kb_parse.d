build-asan/obj/kb/kb_parse.o: kb/kb_parse.c kb/kb_internal.h kb/kb.h
kb/kb_internal.h:
kb/kb.h:
