# vendor/local.mk: third-party files shipped with mailbench, installed
# under $(pkgdatadir)/vendor (found there at run time, or in the source
# tree when the program runs from the build tree).  uPlot draws the HTML
# report's charts; VERSION says which release and where it came from.
uplotdir = $(pkgdatadir)/vendor/uplot
dist_uplot_DATA = vendor/uplot/uPlot.iife.min.js vendor/uplot/uPlot.min.css \
	vendor/uplot/LICENSE vendor/uplot/VERSION
