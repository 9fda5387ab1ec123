build-asan/obj/user/cli/cmd_agent.o: user/cli/cmd_agent.c \
 user/agent/agent.h user/collect/events.h user/core/labels.h \
 user/collect/procmatch.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h storage/store_open.h \
 storage/storage.h user/collect/pmu.h user/collect/events.h bpf/topdown.h \
 user/cli/agent_args.h user/cli/cli_options.h user/cli/target_args.h \
 user/collect/collector.h user/collect/pmu.h user/collect/sampler.h \
 user/core/profile.h user/agent/agent_options.h \
 user/collect/collect_setup.h kb/engine.h kb/kb.h \
 user/collect/tma_events.h user/core/cpuinfo.h kb/kb.h \
 user/cli/commands.h user/core/format.h user/core/parse.h \
 mcp/streamable.h user/http/httpd.h mcp/server.h
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
user/cli/agent_args.h:
user/cli/cli_options.h:
user/cli/target_args.h:
user/collect/collector.h:
user/collect/pmu.h:
user/collect/sampler.h:
user/core/profile.h:
user/agent/agent_options.h:
user/collect/collect_setup.h:
kb/engine.h:
kb/kb.h:
user/collect/tma_events.h:
user/core/cpuinfo.h:
kb/kb.h:
user/cli/commands.h:
user/core/format.h:
user/core/parse.h:
mcp/streamable.h:
user/http/httpd.h:
mcp/server.h:
