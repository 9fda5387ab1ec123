build-asan/obj/user/collect/collector.o: user/collect/collector.c \
 user/collect/collector.h user/collect/events.h user/collect/pmu.h \
 user/core/run.h user/core/labels.h user/core/name_index.h \
 user/core/profile.h bpf/topdown.h user/collect/sampler.h \
 user/core/profile.h user/core/fileio.h user/collect/procmatch.h \
 user/collect/tma_events.h user/core/cpuinfo.h kb/kb.h \
 build-asan/topdown.skel.h user/core/utf8.h
user/collect/collector.h:
user/collect/events.h:
user/collect/pmu.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
bpf/topdown.h:
user/collect/sampler.h:
user/core/profile.h:
user/core/fileio.h:
user/collect/procmatch.h:
user/collect/tma_events.h:
user/core/cpuinfo.h:
kb/kb.h:
build-asan/topdown.skel.h:
user/core/utf8.h:
