#!/bin/sh
# Documents of other tools than realdocs, for `bench/realdocs.py --only other`: Debian's *-doc packages,
# downloaded (not installed) and unpacked into DIR, one folder per tool.
#   bench/otherdocs.sh [DIR]          (default /tmp/llmwiki-otherdocs; questions: training/data/otherdocs_defaults.tsv)
#     apache/    the Apache httpd 2.4 manual, English pages and HOWTOs (HTML from XML by XSLT)
#     aptitude/  the aptitude manual (DocBook HTML)
#     aspell/    the GNU Aspell manual (texinfo HTML)
#     pdf/       the Asymptote manual (TeX) and the Debian Reference (DBLaTeX), PDF
#   bench/otherdocs.sh --more [DIR]   (default /tmp/llmwiki-moredocs; questions: training/data/moredocs.tsv)
#     debref/    the Debian Reference (DocBook XSL HTML)     maint/  the Debian New Maintainers' Guide (DocBook XSL)
#     gettext/   the GNU gettext manual (texi2html)          gtk3/, cairo/  GTK 3 and cairo references (gtk-doc)
#   bench/otherdocs.sh --papers [DIR] (default /tmp/llmwiki-papers; for `bench/realdocs.py --only extract --extra DIR`)
#     eight example papers set in two columns, from texlive-publishers-doc (213 MB download): ACM sigconf and
#     sigplan, REVTeX (APS, AIP), AGU, ASME, IEEEtran, OUP
# Needs apt-get and dpkg-deb; no root.
set -eu
case "${1:-}" in
  --more) SET=more; DEFAULT=/tmp/llmwiki-moredocs; shift ;;
  --papers) SET=papers; DEFAULT=/tmp/llmwiki-papers; shift ;;
  *) SET=other; DEFAULT=/tmp/llmwiki-otherdocs ;;
esac
DIR=${1:-$DEFAULT}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
if [ $SET = papers ]; then
  apt-get download texlive-publishers-doc >/dev/null 2>&1
  dpkg-deb -x texlive-publishers-doc_*.deb x
  rm -rf "$DIR" && mkdir -p "$DIR"
  T=x/usr/share/doc/texlive-doc/latex
  cp $T/acmart/samples/sample-sigconf.pdf $T/acmart/samples/sample-sigplan.pdf $T/revtex4-1/sample/aps/apssamp.pdf \
     $T/revtex/sample/aip/aipsamp.pdf $T/aguplus/aguplus.pdf $T/asmeconf/examples/asmeconf-fontspec.pdf \
     $T/ieeetran/testflow_ctl_A4.pdf $T/oup-authoring-template/oup-authoring-template.pdf "$DIR/"
elif [ $SET = more ]; then
  apt-get download debian-reference-en maint-guide gettext-doc libgtk-3-doc libcairo2-doc >/dev/null 2>&1
  for deb in *.deb; do dpkg-deb -x "$deb" x; done
  rm -rf "$DIR" && mkdir -p "$DIR/debref" "$DIR/maint" "$DIR/gettext" "$DIR/gtk3" "$DIR/cairo"
  cp x/usr/share/debian-reference/*.en.html "$DIR/debref/"
  cp x/usr/share/doc/maint-guide/html/*.html "$DIR/maint/"
  cp x/usr/share/doc/gettext/*.html "$DIR/gettext/"
  cp x/usr/share/gtk-doc/html/gtk3/*.html "$DIR/gtk3/"
  cp x/usr/share/gtk-doc/html/cairo/*.html "$DIR/cairo/"
else
  apt-get download apache2-doc aptitude-doc-en aspell-doc asymptote-doc debian-reference-en >/dev/null 2>&1
  for deb in *.deb; do dpkg-deb -x "$deb" x; done
  rm -rf "$DIR" && mkdir -p "$DIR/apache/howto" "$DIR/aptitude" "$DIR/aspell" "$DIR/pdf"
  cp x/usr/share/doc/apache2-doc/manual/en/*.html "$DIR/apache/"
  cp x/usr/share/doc/apache2-doc/manual/en/howto/*.html "$DIR/apache/howto/"
  cp x/usr/share/doc/aptitude/html/en/*.html "$DIR/aptitude/"
  cp x/usr/share/doc/aspell-doc/aspell.html/*.html "$DIR/aspell/"
  cp x/usr/share/doc/asymptote/asymptote.pdf x/usr/share/debian-reference/debian-reference.en.pdf "$DIR/pdf/"
fi
echo "$DIR: $(find "$DIR" -type f | wc -l) files"
