build-asan/obj/kb/kb_detect.o: kb/kb_detect.c user/core/cpuinfo.h \
 kb/kb_internal.h kb/kb.h
user/core/cpuinfo.h:
kb/kb_internal.h:
kb/kb.h:
