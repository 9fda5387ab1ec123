build-asan/obj/user/collect/tma_events.o: user/collect/tma_events.c \
 user/core/fileio.h user/collect/tma_events.h user/core/cpuinfo.h \
 user/collect/events.h kb/kb.h user/collect/pmu.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 bpf/topdown.h
user/core/fileio.h:
user/collect/tma_events.h:
user/core/cpuinfo.h:
user/collect/events.h:
kb/kb.h:
user/collect/pmu.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
bpf/topdown.h:
