#!/usr/bin/env python3
"""Write queries.jsonl (run from the repo root). Split as fixed in SPLIT_FIXED."""
import json
from pathlib import Path

DEV = set("q01 q03 q05 q07 q09 q13 q15 q17 q19 q21 q23 q25 q29 q31 q33 q35 q37 q39".split())
Q = [
 # state
 ("q01", "state", "Our plotting helpers fetch colormaps with matplotlib.cm.get_cmap('magma') and add a house colormap through cm.register_cmap. Do those module-level functions still exist in the newest matplotlib, and if not, what do we call instead?"),
 ("q02", "state", "What is the oldest Python version that the newest matplotlib release covered here can still be installed on?"),
 ("q03", "state", "We call ax.stem(..., use_line_collection=False) so that every stem is its own Line2D object. Is that flag still honoured by current matplotlib?"),
 ("q04", "state", "An old script of mine calls plt.hold(False) so that each new plot replaces the previous one on the axes. Is the hold mechanism still around, and how do I get that effect today?"),
 ("q05", "state", "We turn Unix timestamps into date-axis numbers with matplotlib.dates.epoch2num. Is that helper still available in recent releases, and what should we use instead?"),
 ("q06", "state", "Our lab machines still select the qt4agg backend. Can an up-to-date matplotlib still draw its windows through Qt4?"),
 ("q07", "state", "Is Axes.plot_date still the right call for time-series plots, or has its use become discouraged or worse by now?"),
 ("q08", "state", "All our notebooks start with plt.style.use('seaborn-whitegrid'). Does matplotlib still ship that style under that name?"),
 ("q09", "state", "Which NumPy version is the minimum that the latest matplotlib release in these notes requires?"),
 ("q10", "state", "We configure log axes with ax.set_yscale('log', basey=2, nonposy='clip'). Are those per-axis keyword names still accepted?"),
 ("q11", "state", "Our 3D code creates ax = Axes3D(fig) and relies on the new axes attaching itself to the figure. Does that still happen automatically?"),
 ("q12", "state", "We switch gridlines off with ax.grid(b=False). Is the keyword b still accepted by grid()?"),
 # origin
 ("q13", "origin", "Starting with which release can I catch matplotlib's own deprecation warnings with an ordinary DeprecationWarning filter?"),
 ("q14", "origin", "In which release did DivergingNorm get its new name TwoSlopeNorm?"),
 ("q15", "origin", "Which matplotlib version dropped its own PNG reading and writing code and started to need Pillow for that?"),
 ("q16", "origin", "When did asking for the old 'spectral' colormap by name start to produce a deprecation warning?"),
 ("q17", "origin", "Which release switched the font cache file on disk from a pickle to JSON?"),
 ("q18", "origin", "Since which version can I write `with plt.ioff():` to switch interactive mode off only for a block of code?"),
 ("q19", "origin", "When was the old mpl_toolkits.axes_grid toolkit first marked as deprecated?"),
 ("q20", "origin", "In which release did matplotlib move its build from setuptools to Meson?"),
 # lookup
 ("q21", "lookup", "When a date axis has no data yet, what range does it show by default now, and what range did it show before?"),
 ("q22", "lookup", "What did the default of the rcParam axes.formatter.limits change to, i.e. from which magnitudes does the tick formatter switch to scientific notation?"),
 ("q23", "lookup", "How big does an array passed to imshow have to be before matplotlib shrinks it ahead of resampling, and how can I avoid the warning that comes with it?"),
 ("q24", "lookup", "Why do the id attributes in SVG files we save differ from the ones older matplotlib versions wrote for the same figure?"),
 ("q25", "lookup", "With hexbin, is the mincnt threshold inclusive or exclusive when I also pass C values?"),
 ("q26", "lookup", "With a PowerNorm whose clip setting is left at False, what happens to data values below vmin now?"),
 ("q27", "lookup", "How is a plot() format string such as '-C11' interpreted now: colour C11, or colour C1 with marker 1?"),
 ("q28", "lookup", "What is the oldest ghostscript version that matplotlib still supports?"),
 # paraphrase
 ("q29", "paraphrase", "When I write a figure out to a file, can the file simply reuse the background and border colours I already gave the figure, without repeating them in the save call?"),
 ("q30", "paraphrase", "On a logarithmic axis my zero and negative points no longer show up squashed against the bottom edge; they are simply left out. Which release changed that?"),
 ("q31", "paraphrase", "Arrays shown as pictures used to come out blocky, with stair-step artefacts, when shrunk or stretched by odd factors; after an upgrade they appear softened. Which default changed?"),
 ("q32", "paraphrase", "On our Windows PCs, typefaces we added by dragging the files into place are no longer picked up by our charts. Why?"),
 ("q33", "paraphrase", "For box-and-whisker charts, are entries hidden by an array's invalid-value flags now left out of the statistics?"),
 ("q34", "paraphrase", "Groups of plots nested inside a figure used to be painted with the figure's background colour; now they come out see-through. What changed?"),
 # process
 ("q35", "process", "After upgrading, grabbing the rendered pixels with fig.canvas.tostring_rgb() prints a deprecation warning. What should I use to get the image data now?"),
 ("q36", "process", "Since upgrading, our code that loops over cs.collections of a contour plot to restyle each level warns that the attribute is deprecated. How should we work with contour sets now?"),
 ("q37", "process", "Our line `from matplotlib.tri.triangulation import Triangulation` fails after updating matplotlib. Where should we import it from?"),
 ("q38", "process", "After an upgrade, reading leg.legendHandles on a legend raises AttributeError. What is that attribute called now?"),
 ("q39", "process", "We import MatplotlibDeprecationWarning from matplotlib.cbook to filter warnings, and after upgrading that import fails. Where does the class live now?"),
 ("q40", "process", "plt.gca(projection='polar') worked for years, but after upgrading it raises a TypeError about the keyword argument. Was that taken out on purpose, and since when was it on its way out?"),
]
assert len(Q) == 40 and len({q[0] for q in Q}) == 40
with Path("eval/retrieval/matplotlib/queries.jsonl").open("w", encoding="utf-8") as out:
    for qid, kind, text in Q:
        split = "dev" if qid in DEV else "test"
        out.write(json.dumps({"_id": qid, "text": text, "metadata": {"kind": kind, "split": split}}, ensure_ascii=False) + "\n")
print(len(Q), "queries")
