build-asan/obj/user/locate/locate.o: user/locate/locate.c \
 user/locate/locate.h user/core/profile.h user/locate/symbolize.h
user/locate/locate.h:
user/core/profile.h:
user/locate/symbolize.h:
