build-asan/obj/user/render/thread_table.o: user/render/thread_table.c \
 kb/engine.h kb/kb.h user/core/run.h user/core/labels.h \
 user/core/name_index.h user/core/profile.h user/core/format.h \
 user/render/thread_table.h
kb/engine.h:
kb/kb.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/core/format.h:
user/render/thread_table.h:
