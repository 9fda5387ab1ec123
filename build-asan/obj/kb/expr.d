build-asan/obj/kb/expr.o: kb/expr.c kb/expr.h
kb/expr.h:
