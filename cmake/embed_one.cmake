# cmake -DIN=file -DOUT=file.cpp -DSYMBOL=name -P embed_one.cmake
# Also writes SYMBOL_sha256: the file's SHA-256 (lower-case hex), computed here at build time so
# that the bundled catalog's identity (catalog/importers.hpp bundled_catalog_key) costs no hashing
# of the whole data at run time.
file(READ ${IN} hex HEX)
file(SHA256 ${IN} digest)
string(LENGTH "${hex}" n)
math(EXPR size "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "((0x..,){32})" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT} "// generated from ${IN}: do not edit\nextern const unsigned char ${SYMBOL}[];\nextern const unsigned long ${SYMBOL}_size;\nconst unsigned char ${SYMBOL}[] = {\n${bytes}0x00};\nconst unsigned long ${SYMBOL}_size = ${size};\nextern const char ${SYMBOL}_sha256[];\nconst char ${SYMBOL}_sha256[] = \"${digest}\";\n")
