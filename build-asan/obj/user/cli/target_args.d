build-asan/obj/user/cli/target_args.o: user/cli/target_args.c \
 user/core/parse.h user/collect/procmatch.h user/cli/target_args.h \
 user/cli/cli_options.h storage/store_open.h storage/storage.h \
 user/core/labels.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h user/collect/collector.h \
 user/collect/events.h user/collect/pmu.h bpf/topdown.h \
 user/collect/sampler.h user/core/profile.h
user/core/parse.h:
user/collect/procmatch.h:
user/cli/target_args.h:
user/cli/cli_options.h:
storage/store_open.h:
storage/storage.h:
user/core/labels.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/collect/collector.h:
user/collect/events.h:
user/collect/pmu.h:
bpf/topdown.h:
user/collect/sampler.h:
user/core/profile.h:
