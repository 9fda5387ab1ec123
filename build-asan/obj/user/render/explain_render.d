build-asan/obj/user/render/explain_render.o: user/render/explain_render.c \
 user/render/explain_render.h kb/explain.h kb/kb.h
user/render/explain_render.h:
kb/explain.h:
kb/kb.h:
