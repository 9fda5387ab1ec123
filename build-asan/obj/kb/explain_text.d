build-asan/obj/kb/explain_text.o: kb/explain_text.c kb/explain.h kb/kb.h
kb/explain.h:
kb/kb.h:
