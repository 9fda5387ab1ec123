build-asan/obj/user/query/stats.o: user/query/stats.c user/query/stats.h
user/query/stats.h:
