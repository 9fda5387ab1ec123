build-asan/obj/user/collect/sampler.o: user/collect/sampler.c \
 user/core/fileio.h user/core/parse.h user/collect/pmu.h \
 user/collect/events.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h bpf/topdown.h \
 user/collect/sampler.h user/core/profile.h
user/core/fileio.h:
user/core/parse.h:
user/collect/pmu.h:
user/collect/events.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
bpf/topdown.h:
user/collect/sampler.h:
user/core/profile.h:
