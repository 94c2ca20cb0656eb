"""Streamlit-side code of the RankLab app, on two floors; imports only run down.

``common`` (the page skeleton and prologue, session-state basics, style, navigation, the
interpretation thresholds, and the app's one data layer: the cache, the memory gate, the
upload slot and the downloads) imports no section. ``ranking``, ``compare``, ``detection``,
``fusion``, ``hashing`` and ``history`` each hold their section's state keys, data module,
widgets and figure builders; a section imports ``common`` and its own modules, never
another section: what two sections share moves to ``common``, or the caller (a page) passes
it. What composes sections (``ui.samples``: every sample at once) stands above them, beside
the pages; nothing in ``common`` or a section imports it. ``tests/test_ui_layers.py`` fails
on an import that runs back up. The package initialisers import nothing, so importing one
module does not load the rest.
"""
