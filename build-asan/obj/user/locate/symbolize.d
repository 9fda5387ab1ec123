build-asan/obj/user/locate/symbolize.o: user/locate/symbolize.c \
 user/core/array.h user/locate/symbolize.h user/core/profile.h
user/core/array.h:
user/locate/symbolize.h:
user/core/profile.h:
