"""Streamlit-side code of the RankLab app, grouped by section.

``common`` (the page skeleton, session-state basics, style, navigation, the upload slot and
the downloads) is used by every section; ``ranking``, ``compare``, ``detection``,
``hashing`` and ``history`` each hold their section's state keys, data loaders, widgets and
figure builders. A section imports ``common`` and, where a page needs it, a section listed
before it (compare uses ranking; ranking's sample loader fills detection and hashing state);
never the other way round. The package initialisers import nothing, so importing one
module does not load the rest.
"""
