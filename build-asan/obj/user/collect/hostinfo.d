build-asan/obj/user/collect/hostinfo.o: user/collect/hostinfo.c \
 user/core/cpuinfo.h user/core/fileio.h user/collect/hostinfo.h \
 user/core/labels.h
user/core/cpuinfo.h:
user/core/fileio.h:
user/collect/hostinfo.h:
user/core/labels.h:
