build-asan/obj/user/doctor/doctor.o: user/doctor/doctor.c \
 user/collect/collect_setup.h kb/engine.h kb/kb.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 user/collect/events.h user/core/labels.h user/collect/sampler.h \
 user/core/profile.h user/collect/tma_events.h user/core/cpuinfo.h \
 kb/kb.h user/collect/pmu.h bpf/topdown.h user/collect/collector.h \
 user/doctor/doctor.h storage/store_open.h storage/storage.h \
 user/collect/events.h user/core/fileio.h user/collect/pmu.h \
 storage/storage.h user/collect/tma_events.h
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
user/collect/collector.h:
user/doctor/doctor.h:
storage/store_open.h:
storage/storage.h:
user/collect/events.h:
user/core/fileio.h:
user/collect/pmu.h:
storage/storage.h:
user/collect/tma_events.h:
