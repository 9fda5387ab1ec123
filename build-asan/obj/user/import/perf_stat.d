build-asan/obj/user/import/perf_stat.o: user/import/perf_stat.c \
 user/import/import.h kb/kb.h user/core/labels.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 user/core/parse.h user/core/utf8.h
user/import/import.h:
kb/kb.h:
user/core/labels.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/core/parse.h:
user/core/utf8.h:
