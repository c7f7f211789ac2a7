# Every statement kind of Python 3.11.
import os
import os.path as osp, sys
import a.b.c
from . import sibling
from .. import parent as p
from ...pkg.mod import (x, y as z,)
from .... import deep
from __future__ import annotations
from os import *
from .mod import name

x = 1
x = y = z = 2
x, y = y, x
[a, b] = c
(a, b), c = d
a, *rest = items
*head, tail = items
a, = b
obj.attr = value
obj[key] = value
obj[1:2] = value
obj.a.b[c].d = value
x: int
x: int = 5
(x): int = 5
obj.attr: str = "s"
obj[0]: float
y: list[int] = []
z: "Forward"
x += 1
x -= 1
x *= 2
x @= m
x /= 2
x //= 2
x %= 3
x **= 2
x >>= 1
x <<= 1
x &= 1
x ^= 1
x |= 1
obj.count += 1
arr[i] -= d
x = yield_ = 3
del x
del x, y
del a[0], b.c
del (a, b)
del [a, b]
del (a), (b),
pass
assert x
assert x, "message"
assert isinstance(x, int), f"bad {x!r}"
global g
global g1, g2
raise
raise ValueError
raise ValueError("bad") from exc
raise RuntimeError() from None
x = 1; y = 2; z = 3;
print(x); print(y)

if a:
    pass
if a:
    pass
else:
    pass
if a:
    pass
elif b:
    pass
elif c:
    x = 1
else:
    y = 2
if a: b = 1
if (n := len(items)) > 10: print(n)

while x:
    x -= 1
while True:
    if x:
        break
    else:
        continue
else:
    done = True

for i in range(10):
    pass
for i, j in pairs:
    pass
for (i, j) in pairs:
    pass
for [i, j] in pairs:
    pass
for i, in singles:
    pass
for *a, b in rows:
    pass
for x in *a, *b:
    pass
for obj.attr in values:
    pass
for d[k] in values:
    pass
for x in y:
    pass
else:
    pass

try:
    pass
except:
    pass
try:
    f()
except ValueError:
    pass
except (TypeError, KeyError) as e:
    raise
except Exception as e:
    print(e)
else:
    ok()
finally:
    cleanup()
try:
    f()
finally:
    g()
try:
    f()
except* ValueError as eg:
    pass
except* (TypeError, OSError):
    pass

with open(p) as f:
    pass
with open(p) as f, open(q) as g:
    pass
with a, b:
    pass
with a as (b, c):
    pass
with a as b.c, d as e[0]:
    pass
with (open(p) as f, open(q) as g):
    pass
with (open(p) as f, open(q) as g,):
    pass
with (a, b):
    pass
with (a, b) as c:
    pass
with (a):
    pass
with (a) as b:
    pass
with (yield):
    pass
with lock: x = 1


def gen():
    yield
    yield 1
    yield 1, 2
    yield from other()
    x = yield
    y = yield x
    z = yield from w
    await_ = (yield)
    return


def f():
    nonlocal_ = 1

    def inner():
        nonlocal nonlocal_
        nonlocal a, b
        return nonlocal_
    return inner


async def coro():
    await x
    async for i in aiter():
        pass
    async for i in aiter():
        pass
    else:
        pass
    async with lock:
        pass
    async with a as b, c as d:
        pass
    result = [i async for i in aiter() if await pred(i)]
    return await other()


class Empty:
    pass


class Sub(Base):
    x: int = 0

    def method(self):
        return self.x


def trailing_semicolon():
    x = 1; pass; del x;


match = 1
match.x = 2
match[0] = 3
match(4)
case = 5
_ = 6
type = 7
print(match, case, _)
