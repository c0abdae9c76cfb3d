# scenarios/local.mk: the scenario files, installed under
# $(pkgdatadir)/scenarios (found there at run time, or in the source tree
# when the program runs from the build tree).
scenariosdir = $(pkgdatadir)/scenarios
dist_scenarios_DATA = scenarios/online.cfg scenarios/cached.cfg scenarios/storage.cfg
