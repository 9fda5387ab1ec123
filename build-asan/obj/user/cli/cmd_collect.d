build-asan/obj/user/cli/cmd_collect.o: user/cli/cmd_collect.c \
 user/collect/collect_setup.h kb/engine.h kb/kb.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 user/collect/events.h user/core/labels.h user/collect/sampler.h \
 user/core/profile.h user/collect/tma_events.h user/core/cpuinfo.h \
 kb/kb.h user/collect/pmu.h bpf/topdown.h user/collect/collector.h \
 user/cli/commands.h user/collect/events.h user/core/parse.h \
 user/core/format.h user/query/hot.h user/query/query.h \
 user/query/stats.h storage/storage.h user/render/query_render.h \
 user/query/query.h user/locate/locate.h user/locate/symbolize.h \
 user/collect/procmatch.h user/agent/sink.h storage/store_open.h \
 storage/storage.h user/collect/tma_events.h user/render/thread_table.h \
 user/render/tma_render.h user/cli/target_args.h user/cli/cli_options.h
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
user/collect/events.h:
user/core/parse.h:
user/core/format.h:
user/query/hot.h:
user/query/query.h:
user/query/stats.h:
storage/storage.h:
user/render/query_render.h:
user/query/query.h:
user/locate/locate.h:
user/locate/symbolize.h:
user/collect/procmatch.h:
user/agent/sink.h:
storage/store_open.h:
storage/storage.h:
user/collect/tma_events.h:
user/render/thread_table.h:
user/render/tma_render.h:
user/cli/target_args.h:
user/cli/cli_options.h:
