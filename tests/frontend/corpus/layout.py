# Layout: indentation with tabs and spaces, form feeds, line joining, comments, Unicode names.
if True:
	x = 1
	if x:
		y = 2
	else:
		y = 3


def tabs():
	return [
		1,
		2,
	]


def after_form_feed():
    pass


if x:
        deep = 8
        if y:
                deeper = 16


class  Spaced  :
    pass


total = 1 + \
    2 + \
    3
if a and \
   b:
    pass
values = [1,   # first
          2,   # second
          # a comment line inside brackets

          3]
call(a,
     b,

     c)
x = {  # open
    'k':  # key
        'v',  # value
}


def f(a,  # first
      b,
      ):  # done
    # comment at block start
    return a  # trailing


    # comment after blank lines, deeper than the block


# comment at column 0 inside nothing
def g():
    x = 1
# dedented comment between statements of a block
    return x


π = 3.14159
数据 = [π, 2 * π]
naïve_café = "ok"
résumé = {naïve_café: 数据}
_private = __dunder__ = _ = 1
x = 1;
y = 2 ; z = 3
if x: pass; y = 4
while 0: break
for i in (): continue
s = ('a'
     'b')
t = (
)
u = [

]
class K: x = 1; y = 2
try: pass
finally: pass
with a: pass
lambda: (
    1
)
