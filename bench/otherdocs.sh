#!/bin/sh
# Documents of other tools than realdocs, for `bench/realdocs.py --only other`: Debian's *-doc packages,
# downloaded (not installed) and unpacked into DIR (default: /tmp/llmwiki-otherdocs), one folder per tool:
#   apache/    the Apache httpd 2.4 manual, English pages and HOWTOs (HTML from XML by XSLT)
#   aptitude/  the aptitude manual (DocBook HTML)
#   aspell/    the GNU Aspell manual (texinfo HTML)
#   pdf/       the Asymptote manual (TeX) and the Debian Reference (DBLaTeX), PDF
# The questions over them are training/data/otherdocs_defaults.tsv. Needs apt-get and dpkg-deb; no root.
set -eu
DIR=${1:-/tmp/llmwiki-otherdocs}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
apt-get download apache2-doc aptitude-doc-en aspell-doc asymptote-doc debian-reference-en >/dev/null 2>&1
for deb in *.deb; do dpkg-deb -x "$deb" x; done
rm -rf "$DIR" && mkdir -p "$DIR/apache/howto" "$DIR/aptitude" "$DIR/aspell" "$DIR/pdf"
cp x/usr/share/doc/apache2-doc/manual/en/*.html "$DIR/apache/"
cp x/usr/share/doc/apache2-doc/manual/en/howto/*.html "$DIR/apache/howto/"
cp x/usr/share/doc/aptitude/html/en/*.html "$DIR/aptitude/"
cp x/usr/share/doc/aspell-doc/aspell.html/*.html "$DIR/aspell/"
cp x/usr/share/doc/asymptote/asymptote.pdf x/usr/share/debian-reference/debian-reference.en.pdf "$DIR/pdf/"
echo "$DIR: $(find "$DIR" -type f | wc -l) files"
