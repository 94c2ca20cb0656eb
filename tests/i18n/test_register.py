"""The Spanish catalog speaks to the visitor in one register: tú (informal), never usted.

A text that mixes "Elige" and "Elija", or "tus" and "su archivo", on one screen reads as if
several people wrote it. The check is a word list: the formal imperatives that cannot be
anything else where they stand (a capitalised "Cargue" opens an instruction; a lowercase one
only after a clause break or "o"/"y", since "que lea la página" is a third-person
subjunctive), the formal forms with an attached pronoun ("guárdelo", "elíjala"), and
"usted" itself. A possessive "su"/"sus" can be the thing's own ("la ejecución y sus
columnas") and is left to review.
"""

from __future__ import annotations

import re
from pathlib import Path

from babel.messages.pofile import read_po

ROOT = Path(__file__).resolve().parents[2]
SPANISH = ROOT / "metrics_core" / "locales" / "es" / "LC_MESSAGES" / "messages.po"

#: Formal (usted) imperatives; the tú form is in the comment of each line.
FORMAL_IMPERATIVES = (
    "Abra",  # Abre
    "Añada",  # Añade
    "Arrastre",  # Arrastra
    "Cambie",  # Cambia
    "Cargue",  # Carga
    "Compruebe",  # Comprueba
    "Comprima",  # Comprime
    "Corrija",  # Corrige
    "Descargue",  # Descarga
    "Descomprima",  # Descomprime
    "Divida",  # Divide
    "Dé",  # Da
    "Edite",  # Edita
    "Elija",  # Elige
    "Elimine",  # Elimina
    "Escriba",  # Escribe
    "Evalúe",  # Evalúa
    "Guarde",  # Guarda
    "Haga",  # Haz
    "Indique",  # Indica
    "Inicie",  # Inicia
    "Introduzca",  # Introduce
    "Llame",  # Llama
    "Mueva",  # Mueve
    "Pase",  # Pasa
    "Ponga",  # Pon
    "Pruebe",  # Prueba
    "Pulse",  # Pulsa
    "Quite",  # Quita
    "Revise",  # Revisa
    "Seleccione",  # Selecciona
    "Suba",  # Sube
    "Suelte",  # Suelta
    "Use",  # Usa
    "Vea",  # Mira
    "Vuelva",  # Vuelve
)
#: Formal imperatives with an attached pronoun, and "usted": formal wherever they stand.
FORMAL_ANYWHERE = (
    "usted",
    "ustedes",
    "ábralo",
    "ábrala",
    "cámbiele",
    "cámbielos",
    "cárguelo",
    "cárguela",
    "compárelas",
    "compárelos",
    "descárguelo",
    "elíjala",
    "elíjalo",
    "escríbala",
    "escríbalo",
    "guárdelo",
    "guárdela",
    "indíquela",
    "indíquelo",
    "llámela",
    "llámelo",
    "proporciónelo",
    "revíselo",
    "revísela",
    "súbalo",
    "súbala",
    "quítela",
    "quítelo",
)
_WORDS = "|".join(FORMAL_IMPERATIVES)
#: Capitalised: an instruction, wherever it stands.
_CAPITALISED = re.compile(rf"(?<!\w)(?:{_WORDS})(?!\w)")
#: Lowercase: only where an instruction starts (text start, after . : ; ! ? or an opening
#: bracket, or after "o"/"y" joining two instructions).
_LOWER = re.compile(rf"(?:^|[.:;!?(]\s*|(?<!\w)[oy]\s+)((?:{_WORDS.lower()}))(?!\w)")
_ANYWHERE = re.compile(rf"(?<!\w)(?:{'|'.join(FORMAL_ANYWHERE)})(?!\w)", re.IGNORECASE)


def formal_words(text: str) -> list[str]:
    """The formal-register words of ``text``, in order of appearance."""
    found = [(m.start(), m.group(0)) for m in _CAPITALISED.finditer(text)]
    found += [(m.start(1), m.group(1)) for m in _LOWER.finditer(text)]
    found += [(m.start(), m.group(0)) for m in _ANYWHERE.finditer(text)]
    return [word for _, word in sorted(found)]


def _translations():
    with open(SPANISH, "rb") as fh:
        catalog = read_po(fh, locale="es")
    for message in catalog:
        if not message.id:
            continue
        strings = message.string if isinstance(message.string, (list, tuple)) else [message.string]
        msgid = message.id if isinstance(message.id, str) else message.id[0]
        for text in strings:
            if text:
                yield msgid, text


def test_the_check_finds_the_formal_register():
    assert formal_words("Suba sus propios qrels y ejecuciones") == ["Suba"]
    assert formal_words("Quite la ejecución en la página Datos o cargue el archivo correcto.") == [
        "Quite",
        "cargue",
    ]
    assert formal_words("No hay ejecuciones cargadas: cargue qrels y ejecuciones") == ["cargue"]
    assert formal_words("Dé un archivo .parquet o elija otro formato") == ["Dé", "elija"]
    assert formal_words("Cada fila necesita una puntuación; quite o corrija esta fila") == [
        "quite",
        "corrija",
    ]
    assert formal_words("El archivo está dañado; guárdelo de nuevo") == ["guárdelo"]
    assert formal_words("Llame query_id a una de ellas (o elíjala en la asignación)") == [
        "Llame",
        "elíjala",
    ]
    assert formal_words("los valores debe convertirlos usted") == ["usted"]
    assert formal_words("Usted elige") == ["Usted"]


def test_the_check_leaves_the_informal_and_third_person_alone():
    for text in (
        "Sube tus propios qrels y ejecuciones",
        "Da un archivo .parquet o elige otro formato",
        "Quita la ejecución en la página Datos o carga el archivo correcto.",
        "cualquier formato que lea la página Datos",
        "UTC salvo que se indique un desfase",
        "para que una sola consulta con AP = 0 no deje la media en 0",
        "Pide a quien desplegó esta aplicación que revise su ajuste history_store",
        "Nombre del conjunto de pruebas",
        "Usa cuda:0 o cpu",
        "elígela o guárdalo",
    ):
        assert formal_words(text) == [], text


def test_every_spanish_text_uses_tu_never_usted():
    formal = [
        f"{msgid!r} -> {text!r}: {', '.join(words)}"
        for msgid, text in _translations()
        if (words := formal_words(text))
    ]
    assert formal == [], "formal register (usted) in the Spanish catalog; use tú:\n" + "\n".join(
        formal
    )


def test_the_catalog_has_texts_to_check():
    texts = list(_translations())
    assert len(texts) > 1000
    assert any(text.startswith("Sube tus propios qrels") for _, text in texts)
