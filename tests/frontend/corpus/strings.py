# String and bytes literals: prefixes, quotes, escapes, concatenation.
s = 'single'
s = "double"
s = '''triple single'''
s = """triple double"""
s = ''
s = ""
s = ''''''
s = """"""
s = 'it\'s'
s = "say \"hi\""
s = '"'
s = "'"
s = """a "quoted" word"""
s = '''it's'''
s = """ends with quote\""""
s = "tab\there\nnewline\\backslash\rcr\fff\vvt\aa\bb"
s = "\0\7\77\101\777"
s = "\x41\x7e\xff"
s = "\u00e9\u20ac\uffff"
s = "\U0001F600\U00000041"
s = "\ud800 lone surrogate"
s = "\d\q\ unknown escapes kept"
s = "line \
continued"
s = """multi
line
string"""
s = """  indented
    text  """
s = "unicode: é ü ß 漢字 😀"
s = r"raw \n \t \\ \x41"
s = R"raw"
s = r'\''
s = r"\""
s = r"""raw
triple \n"""
s = u"unicode prefix"
s = U"upper unicode prefix"
s = u"a" "b"
s = "a" u"b"
b = b"bytes"
b = B"bytes"
b = b'\x00\xff\n\t\\\''
b = b"\0\7\101\377"
b = b"\d unknown"
b = br"raw \x00"
b = rb"raw"
b = Br"raw"
b = bR"raw"
b = RB"raw"
b = b""
b = b"a" b"b" rb"\c"
b = b"""triple
bytes"""
s = "a" "b" "c"
s = ("implicit "
     "concatenation "
     'across lines')
s = "a" 'b' """c""" '''d'''
s = "" ""
s = 'x' \
    'y'
d = "mixing\
 continuation"
