build-asan/obj/user/collect/collect_setup.o: user/collect/collect_setup.c \
 user/collect/collect_setup.h kb/engine.h kb/kb.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 user/collect/events.h user/core/labels.h user/collect/sampler.h \
 user/core/profile.h user/collect/tma_events.h user/core/cpuinfo.h \
 kb/kb.h user/collect/pmu.h bpf/topdown.h user/collect/hostinfo.h \
 user/collect/procmatch.h
user/collect/collect_setup.h:
kb/engine.h:
kb/kb.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/collect/events.h:
user/core/labels.h:
user/collect/sampler.h:
user/core/profile.h:
user/collect/tma_events.h:
user/core/cpuinfo.h:
kb/kb.h:
user/collect/pmu.h:
bpf/topdown.h:
user/collect/hostinfo.h:
user/collect/procmatch.h:
