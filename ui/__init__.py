"""Streamlit-side code of the RankLab app, on two floors; imports only run down.

``common`` (the page skeleton and prologue, session-state basics, style, navigation, the
interpretation thresholds, and the app's one data layer: the cache, the memory gate, the
upload slot, the downloads, the visitors' store) imports no section. ``ranking``,
``compare``, ``detection``, ``fusion``, ``hashing`` and ``history`` each hold their section's
state keys, data module, widgets and figure builders; a section imports ``common`` and its
own modules, never another section: what two sections share moves to ``common``, or the
caller (a page) passes it. What composes sections (``ui.samples``: every sample at once)
stands above them, beside the pages; nothing in ``common`` or a section imports it.
``tests/test_ui_layers.py`` fails on an import that runs back up. The package initialisers
import nothing, so importing one module does not load the rest.

**One gate.** Pages import ``ui.*`` and, of the library, ``metrics_core.errors`` only. The
library's computations (reading, ranking, evaluating, statistics, fusion and its tuning, hash
codes, History's store, exports ...) are called by a section's data module
(``ui/<section>/data.py``) or the common data layer (``cache``, ``budget``, ``upload``,
``downloads``, ``keep``, ``store``, ``reclaim``), and there only inside the memory gate:
``ui.common.cache.remember`` (a cached build, its ``need`` stated) or ``ui.common.budget.work``
/ ``reserve``. Every other module uses the library's words only: constants, the error types,
labels, escapers, measure and run names, conventions, and the readings of a result already
computed (its legend, its paper table). ``tests/app/test_one_gate.py`` checks the imports and
runs every page with the library's computations failing outside a reservation.

**Names as text.** A message with values reaches Streamlit's Markdown (text, captions,
alerts, titles, labels, help) through ``ui.common.style.say`` (every value escaped, the
app's own composed Markdown kept) or ``md_text`` / ``md_join``; a message for a place that
shows text as it is (a grid, a file name, an export's title, a figure) through ``plain``.
Grids (``st.dataframe``) show names; ``st.table`` (Markdown cells) is not used.
``tests/app/test_names_as_text.py`` checks every Markdown call and every page with names
made of links, images, tags, code, math, colours, icons, headings and long strings.
"""
