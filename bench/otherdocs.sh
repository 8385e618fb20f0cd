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
#   bench/otherdocs.sh --six [DIR]    (default /tmp/llmwiki-sixdocs; no question set: read its wiki and titles)
#     node/ (Node.js's own generator), sqlite/ (hand-kept HTML), gtk4/ (gi-docgen), haddock/ (Haddock),
#     erlang/ (erl_docgen HTML and three Apache FOP PDFs), pandoc/ (pages pandoc writes from Markdown and
#     reStructuredText, and pandoc's README as Markdown)
#   bench/otherdocs.sh --papers [DIR] (default /tmp/llmwiki-papers; for `bench/realdocs.py --only extract --extra DIR`)
#     eight example papers set in two columns, from texlive-publishers-doc (213 MB download): ACM sigconf and
#     sigplan, REVTeX (APS, AIP), AGU, ASME, IEEEtran, OUP
# Needs apt-get and dpkg-deb; no root.
set -eu
case "${1:-}" in
  --more) SET=more; DEFAULT=/tmp/llmwiki-moredocs; shift ;;
  --papers) SET=papers; DEFAULT=/tmp/llmwiki-papers; shift ;;
  --six) SET=six; DEFAULT=/tmp/llmwiki-sixdocs; shift ;;
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
elif [ $SET = six ]; then
  apt-get download nodejs-doc sqlite3-doc libgtk-4-doc ghc-doc erlang-doc pandoc pandoc-data liblua5.3-0 >/dev/null 2>&1
  for deb in *.deb; do dpkg-deb -x "$deb" x; done
  rm -rf "$DIR" && mkdir -p "$DIR/node" "$DIR/sqlite" "$DIR/gtk4" "$DIR/haddock" "$DIR/erlang/getting_started" \
    "$DIR/erlang/reference_manual" "$DIR/erlang/pdf" "$DIR/pandoc"
  for page in path events timers readline os url child_process process stream buffer cli errors modules packages assert util; do
    cp "x/usr/share/doc/nodejs/api/$page.html" "$DIR/node/"
  done
  for page in about datatype3 faq whentouse lang_select lang_createtable lang_createindex lang_transaction lang_vacuum \
      lang_upsert lang_with lang_expr lang_altertable lang_attach pragma foreignkeys autoinc wal isolation inmemorydb fts5 \
      json1 quirks different lockingv3 atomiccommit queryplanner optoverview cli tempfiles limits datatypes nulls \
      rowidtable withoutrowid partialindex expridx gencol howtocorrupt; do
    cp "x/usr/share/doc/sqlite3/$page.html" "$DIR/sqlite/"
  done
  for page in actions building compiling css-overview drag-and-drop drawing-model getting_started initialization \
      input-handling migrating-3to4 overview resources running section-accessibility section-list-widget \
      section-text-widget section-tree-widget x11 wayland class.Widget class.Button class.Window class.Box class.Entry \
      class.Label class.Application class.Grid method.Widget.show method.Widget.queue_draw method.Button.set_label \
      property.Button.label signal.Button.clicked enum.Align class.ListView class.Builder; do
    cp "x/usr/share/doc/libgtk-4-doc/gtk4/$page.html" "$DIR/gtk4/"
  done
  H=x/usr/share/doc/ghc-doc/html/libraries
  for page in base-4.15.1.0/Data-List base-4.15.1.0/Data-Maybe base-4.15.1.0/Control-Monad base-4.15.1.0/Prelude \
      base-4.15.1.0/Control-Exception base-4.15.1.0/Data-IORef base-4.15.1.0/Control-Concurrent-MVar \
      base-4.15.1.0/Data-Foldable base-4.15.1.0/Data-Either base-4.15.1.0/System-IO containers-0.6.4.1/Data-Map-Strict \
      containers-0.6.4.1/Data-Set containers-0.6.4.1/Data-Sequence stm-2.5.0.0/Control-Concurrent-STM-TVar \
      text-1.2.5.0/Data-Text; do
    cp "$H/$page.html" "$DIR/haddock/"
  done
  E=x/usr/share/doc/erlang-doc
  cp $E/doc/getting_started/*.html "$DIR/erlang/getting_started/"
  cp $E/doc/reference_manual/*.html "$DIR/erlang/reference_manual/"
  cp $E/lib/sasl-*/doc/pdf/sasl-*.pdf $E/lib/parsetools-*/doc/pdf/parsetools-*.pdf $E/lib/odbc-*/doc/pdf/odbc-*.pdf "$DIR/erlang/pdf/"
  P="env LD_LIBRARY_PATH=$PWD/x/usr/lib/x86_64-linux-gnu x/usr/bin/pandoc --data-dir=$PWD/x/usr/share/pandoc/data"
  zcat x/usr/share/doc/pandoc/README.md.gz > "$DIR/pandoc/readme.md"
  $P "$DIR/pandoc/readme.md" -s --toc -o "$DIR/pandoc/readme.html" --metadata title="Pandoc"
  zcat x/usr/share/doc/nodejs/api/dns.md.gz | $P -s --toc -o "$DIR/pandoc/node-dns.html" --metadata title="DNS"
  zcat x/usr/share/doc/nodejs/api/http.md.gz | $P -s -o "$DIR/pandoc/node-http.html" --metadata title="HTTP"
  for page in invoking markup; do
    $P -f rst "x/usr/share/doc/ghc-doc/html/haddock/_sources/$page.rst.txt" -s --toc -o "$DIR/pandoc/haddock-$page.html" \
      --metadata title="Haddock: $page" 2>/dev/null
  done
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
