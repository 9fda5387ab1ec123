build-asan/obj/user/render/tma_render.o: user/render/tma_render.c \
 user/core/format.h user/render/tma_render.h kb/engine.h kb/kb.h \
 user/core/run.h user/core/labels.h user/core/name_index.h \
 user/core/profile.h
user/core/format.h:
user/render/tma_render.h:
kb/engine.h:
kb/kb.h:
user/core/run.h:
user/core/labels.h:
user/core/name_index.h:
user/core/profile.h:
