build-asan/obj/kb/explain.o: kb/explain.c kb/explain.h kb/kb.h
kb/explain.h:
kb/kb.h:
