build-asan/obj/user/core/name_index.o: user/core/name_index.c \
 user/core/array.h user/core/name_index.h
user/core/array.h:
user/core/name_index.h:
