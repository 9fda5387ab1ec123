build-asan/obj/user/cli/cmd_service.o: user/cli/cmd_service.c \
 user/cli/agent_args.h user/agent/agent.h user/collect/events.h \
 user/core/labels.h user/collect/procmatch.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 storage/store_open.h storage/storage.h user/collect/pmu.h \
 user/collect/events.h bpf/topdown.h user/cli/cli_options.h \
 user/cli/target_args.h user/collect/collector.h user/collect/pmu.h \
 user/collect/sampler.h user/core/profile.h user/agent/agent_options.h \
 user/cli/commands.h user/core/fileio.h user/core/parse.h \
 user/cli/query_cli.h user/render/query_render.h user/query/hot.h \
 user/query/query.h user/query/stats.h storage/storage.h \
 user/query/query.h user/agent/service.h mcp/streamable.h \
 user/http/httpd.h mcp/server.h
user/cli/agent_args.h:
user/agent/agent.h:
user/collect/events.h:
user/core/labels.h:
user/collect/procmatch.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
storage/store_open.h:
storage/storage.h:
user/collect/pmu.h:
user/collect/events.h:
bpf/topdown.h:
user/cli/cli_options.h:
user/cli/target_args.h:
user/collect/collector.h:
user/collect/pmu.h:
user/collect/sampler.h:
user/core/profile.h:
user/agent/agent_options.h:
user/cli/commands.h:
user/core/fileio.h:
user/core/parse.h:
user/cli/query_cli.h:
user/render/query_render.h:
user/query/hot.h:
user/query/query.h:
user/query/stats.h:
storage/storage.h:
user/query/query.h:
user/agent/service.h:
mcp/streamable.h:
user/http/httpd.h:
mcp/server.h:
