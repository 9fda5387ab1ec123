build-asan/obj/user/collect/pmu.o: user/collect/pmu.c user/collect/pmu.h \
 user/collect/events.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h bpf/topdown.h
user/collect/pmu.h:
user/collect/events.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
bpf/topdown.h:
