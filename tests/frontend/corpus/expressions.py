# Expressions: precedence, associativity, displays, comprehensions, calls, subscripts.
x = a or b or c
x = a and b and c
x = a or b and c
x = (a or b) and c
x = not a
x = not not a
x = not a == b
x = a if b else c
x = a if b else c if d else e
x = (a if b else c) if d else e
x = lambda: 0
x = lambda a: a
x = lambda a, b=1, *args, c, d=2, **kw: a + b
x = lambda *, k: k
x = lambda a, /, b: a
x = lambda: (yield)
x = lambda x: lambda y: x + y
x = a < b
x = a < b < c
x = a == b != c
x = a <= b >= c > d
x = a in b
x = a not in b
x = a is b
x = a is not b
x = a is not None and b is None
x = a | b | c
x = a ^ b
x = a & b
x = a << b >> c
x = a + b - c
x = a * b / c // d % e @ f
x = -a
x = +a
x = ~a
x = -1
x = --a
x = -a ** b
x = a ** -b
x = a ** b ** c
x = (a ** b) ** c
x = 2 ** -1
x = a + b * c
x = (a + b) * c
x = a * (b + c)
x = ((a))
x = (((a + b)))
x = a.b
x = a.b.c
x = a().b
x = a.b()
x = a[b]
x = a[b][c]
x = a[b].c(d)
x = (a)(b)
x = (a).b
x = (a)[b]
x = f()
x = f(a)
x = f(a, b)
x = f(a, b,)
x = f(a=1)
x = f(a, b=1)
x = f(*args)
x = f(**kwargs)
x = f(a, *args, b=1, **kwargs)
x = f(*a, *b, c=1, **d, **e)
x = f(a=1, *b)
x = f(**d, e=1)
x = f(x for x in y)
x = f((x for x in y), z)
x = f(x := 1)
x = f(a, (b := 2))
x = f(*[1, 2])
x = f(
    a,
    b,
)
x = a[1]
x = a[-1]
x = a[1:2]
x = a[1:]
x = a[:2]
x = a[:]
x = a[::]
x = a[::2]
x = a[1:2:3]
x = a[::-1]
x = a[1:2, 3]
x = a[1:2, ::3]
x = a[:, None]
x = a[None, :]
x = a[..., 0]
x = a[i, j]
x = a[i, j,]
x = a[(i, j)]
x = a[()]
x = a[i][j]
x = a[*idx]
x = a[1, *idx]
x = a[b:=1]
x = a[(b:=1):2]
x = a[lambda: 1]
x = ()
x = (1,)
x = (1, 2)
x = 1, 2
x = 1,
x = (*a, *b)
x = *a, *b
x = []
x = [1]
x = [1, 2,]
x = [*a, b]
x = {}
x = {1: 2}
x = {1: 2, 3: 4,}
x = {**a}
x = {**a, 'b': 1, **c}
x = {'a': 1, **b}
x = {1}
x = {1, 2,}
x = {*a, *b}
x = [i for i in range(10)]
x = [i for i in range(10) if i % 2]
x = [i for i in range(10) if i % 2 if i % 3]
x = [(i, j) for i in range(3) for j in range(i)]
x = [i for i, j in pairs]
x = [i for (i, j) in pairs]
x = [i for *i, j in rows]
x = [y for x in z if x for y in x]
x = [[i * j for j in row] for i, row in enumerate(m)]
x = {i for i in a}
x = {k: v for k, v in d.items()}
x = {k: v for k, v in d.items() if v}
x = (i for i in a)
x = (i for i in a if i)
x = [x for x in lambda_list]
x = [x async for x in aiter()]
x = (n := 10)
x = [y := f(x), y ** 2]
x = [y for x in data if (y := f(x)) is not None]
x = ...
x = Ellipsis
x = None
x = True
x = False
x = a if b else lambda: c
x = f(*a or b)
x = a[1:2][3:4]
x = -a.b
x = not a.b
x = await_ + 1
x = a.b.c.d.e.f
print(*args, sep="", end="\n")
print(*args, file=sys.stderr)
x = y = lambda: (a, b)
x = [
    1,
    2,
    3
]
x = {
    "key": "value",
    "other": [1, 2, 3],
}
x = (1 +
     2 +
     3)
x = a.b(c).d[e](f).g
x = f(a)(b)(c)
x = f()[0]()
x = [a, b][c]
x = {a: b}[c]
x = "abc"[0]
x = "abc".upper()
x = 1 .real
x = 1.0.real
x = (1).real
x = a if b else(c)
x = 1 if True else 2
x = [1,2][0:1]
