# cmake -DIN=file -DOUT=file.cpp -DSYMBOL=name -P embed_one.cmake
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR size "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){32})" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT} "// generated from ${IN}: do not edit\nextern const unsigned char ${SYMBOL}[];\nextern const unsigned long ${SYMBOL}_size;\nconst unsigned char ${SYMBOL}[] = {\n${bytes}0x00};\nconst unsigned long ${SYMBOL}_size = ${size};\n")
