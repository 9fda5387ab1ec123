build-asan/obj/user/cli/cmd_top.o: user/cli/cmd_top.c \
 user/collect/collect_setup.h kb/engine.h kb/kb.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 user/collect/events.h user/core/labels.h user/collect/sampler.h \
 user/core/profile.h user/collect/tma_events.h user/core/cpuinfo.h \
 kb/kb.h user/collect/pmu.h bpf/topdown.h user/collect/collector.h \
 user/cli/commands.h user/core/format.h user/core/parse.h \
 user/collect/procmatch.h user/cli/target_args.h user/cli/cli_options.h \
 storage/store_open.h storage/storage.h user/top/top_loop.h
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
user/cli/commands.h:
user/core/format.h:
user/core/parse.h:
user/collect/procmatch.h:
user/cli/target_args.h:
user/cli/cli_options.h:
storage/store_open.h:
storage/storage.h:
user/top/top_loop.h:
