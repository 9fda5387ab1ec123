build-asan/obj/user/top/top_view.o: user/top/top_view.c \
 user/core/format.h user/render/thread_table.h user/core/run.h \
 user/core/labels.h user/core/name_index.h user/core/profile.h \
 user/render/tma_render.h kb/engine.h kb/kb.h user/top/top_view.h
user/core/format.h:
user/render/thread_table.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
user/render/tma_render.h:
kb/engine.h:
kb/kb.h:
user/top/top_view.h:
