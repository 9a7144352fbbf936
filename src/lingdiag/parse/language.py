"""The words an answer reader reads a language with: :class:`AnswerLanguage`, the built-in
languages (``en``, ``de``, ``es``, ``fr``, ``zh``, ``ja``) and a suite's own or declared ones.

Every kind of word (``WORD_KINDS``) has one job in the reader (``lingdiag.parse.reader``):
``cues`` and ``subjects`` introduce an answer, ``copulas`` join them to it, ``affirmations``
confirm it, and ``negations``, ``questions``, ``hedges``, ``conditions``, ``contrasts``,
``retractions``, ``doubts`` and ``judgements`` take it back; ``reasons`` end a label's clause,
``particles`` may close a label in a script without spaces, ``joiners`` join the labels of a
list, ``items`` open an invented next item, and ``determiners`` make a label word between them
and a noun an adjective. Words are plain text, matched case-insensitively as whole words in
spaced scripts and as the longest word in unspaced ones.

An answer is read with the words of its language *and* of every built-in language
(:func:`reading_words`): a model answering a German prompt with "Answer: wahr", or a Chinese one
with "答案：True", is read as it wrote. A word that is common in another built-in language with
another job is left out of the lists (German ``also``, a cue, is English's "also"; Spanish
``son``, a copula, English's "son"); the words kept are rare in the others' answers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, fields, replace
from functools import lru_cache
from typing import Any

from lingdiag.errors import ConfigError, UnknownNameError

WORD_KINDS = ("cues", "copulas", "negations", "questions", "reasons", "particles", "subjects", "hedges",
              "conditions", "contrasts", "retractions", "doubts", "judgements", "affirmations", "joiners", "items",
              "determiners", "revisions", "drafts")
"""The kinds of answer words a language has and a suite file may add to (or give, for a language
lingdiag has none of). The first six are those suite files gave before the reader was redesigned."""
NEEDED = ("cues", "negations")
"""The kinds a language without built-in words must be given: without cues no answer phrase is
read, without negations a denied label would be read as the label."""


@dataclass(frozen=True, slots=True)
class Punctuation:
    """The marks one script ends its sentences and clauses with, and asks with (the reader's scan
    splits every answer by all of them: a model may answer in any script).
    """

    script: str
    sentence: str
    """Marks that end a sentence (its question marks among them)."""
    question: str
    """Marks that ask: a label its sentence ends with one of is questioned (``X؟``)."""
    clause: str
    """Marks that end a clause within a sentence (a comma, a semicolon, a colon)."""


PUNCTUATION: tuple[Punctuation, ...] = (
    # Latin's full stop is the scan's own rule (a decimal point, an ellipsis and e.g. end nothing).
    Punctuation("Latin", "!?", "?", ",;:"),
    Punctuation("Han and kana", "。！？｡", "？", "，；：、､"),
    Punctuation("Arabic", "؟۔", "؟", "،؛"),
    Punctuation("Devanagari", "।॥", "", ""),
    Punctuation("Armenian", "։՜՞", "՞", "՝"),
    Punctuation("Ethiopic", "።፧", "፧", "፣፤፥፦"),
    Punctuation("Myanmar", "။", "", "၊"),
    Punctuation("Khmer", "។៕", "", ""),
    Punctuation("Tibetan", "།༎", "", ""),
    Punctuation("Mongolian", "᠃᠉", "", "᠂᠈"),
    Punctuation("Hebrew", "׃", "", ""),
)
"""Each script's sentence, question and clause marks, as the reader reads them."""
FOLDED_MARKS: Mapping[str, str] = {"\u037e": "?", "\u0387": ";"}
"""Marks that Unicode NFKC would fold into another mark of another meaning, written as the mark they
mean before it runs: the Greek question mark (NFKC: ``;``) asks, the Greek ano teleia (NFKC: ``·``)
ends a clause."""


@dataclass(frozen=True)
class AnswerLanguage:
    """How answers in one language commit to a label, and take it back: its words, by kind."""

    code: str
    """BCP 47 tag (``en``, ``zh``, ``ru``)."""
    cues: tuple[str, ...] = ()
    """Words that introduce the answer (``answer``, ``答案``, ``option``): a label up to a few words
    after one (``The answer to this is: True``) is committed to."""
    copulas: tuple[str, ...] = ()
    """What joins a cue or a subject to its label besides ``:`` and ``=`` (``is``, ``ist``, ``是``)."""
    negations: tuple[str, ...] = ()
    """Words that deny a label in its clause (``not``, ``nicht``, ``不是``, ``rather than``)."""
    questions: tuple[str, ...] = ()
    """Words that question a label in its clause (``whether``, ``ли``, ``吗``)."""
    reasons: tuple[str, ...] = ()
    """Words that open a reason after a label (``because``, ``weil``, ``因为``): the label's clause
    ends there, so ``False because he did not finish`` is not a negated ``False``."""
    particles: tuple[str, ...] = ()
    """What may follow a label besides punctuation, a space or the end (``的``, ``です``, Korean
    ``입니다``): in a script without spaces nothing else may, so ``对不起`` and ``对于`` do not name
    ``对``, nor ``答えは誤りではありません`` ``誤り``."""
    subjects: tuple[str, ...] = ()
    """What may be said to be a label when the label ends its clause (``The hypothesis is true.``,
    ``This is False.``)."""
    hedges: tuple[str, ...] = ()
    """Words that hedge a label in its clause (``maybe``, ``probably``, ``vielleicht``, ``可能``)."""
    conditions: tuple[str, ...] = ()
    """Words that make a label conditional in its clause or sentence (``if``, ``unless``, ``如果``)."""
    contrasts: tuple[str, ...] = ()
    """Words that qualify a label right after it (``but``, ``however``, ``aber``, ``但是``)."""
    retractions: tuple[str, ...] = ()
    """Words that take back what came before (``actually``, ``or rather``, ``wait``, ``不对``)."""
    doubts: tuple[str, ...] = ()
    """Phrases of the speaker's doubt anywhere in an answer (``not sure``, ``hard to say``, ``it depends``)."""
    judgements: tuple[str, ...] = ()
    """Words that judge a label wrong or unlikely (``incorrect``, ``unlikely``, ``a stretch``)."""
    affirmations: tuple[str, ...] = ()
    """Words that confirm a label (``correct``, ``yes``, ``no doubt``): ``B is correct`` commits to B
    (as does a cue there: ``B is the answer``), and ``True, no doubt`` is no negation."""
    joiners: tuple[str, ...] = ()
    """Words that join labels into a list (``or``, ``and``, ``oder``, ``还是``): ``B or C`` is no answer."""
    items: tuple[str, ...] = ()
    """Words that open a new item at the start of a line (``Premise:``, ``Question:``): a model
    that invents the next item after answering is read up to there."""
    determiners: tuple[str, ...] = ()
    """Words before a noun (``a``, ``the``, ``ein``, ``une``): a label word between one and another
    word is an adjective, not a label (``an unknown person``, ``the true story``)."""
    revisions: tuple[str, ...] = ()
    """Words that open a revision of the answer given before them (``actually``, ``on reflection``,
    ``wait``, ``revised answer``): the answer committed to after one supersedes it, and with none
    after it the answer is taken back (``lingdiag.parse.revise``)."""
    drafts: tuple[str, ...] = ()
    """Words that introduce a draft answer (``initial answer``, ``at first``): the next answer
    committed to in a later sentence supersedes it."""

    def extended(self, words: Mapping[str, Iterable[str]]) -> AnswerLanguage:
        """This language with more words of each kind (a suite's own: ``{"cues": ["Urteil"]}``)."""
        more: dict[str, Any] = {kind: (*getattr(self, kind), *(w for w in ws if w not in getattr(self, kind)))
                                for kind, ws in words.items()}
        return replace(self, **more) if more else self

    def recorded(self) -> dict[str, str]:
        """What a reading's detail records of the language (English's records predate languages: nothing)."""
        if self.code == "en":
            return {}
        return {"language": self.code, "normalisation": "NFKC"}


ENGLISH = AnswerLanguage(
    "en",
    cues=("answer", "final answer", "label", "judgment", "judgement", "relation", "prediction", "output", "verdict",
          "conclusion", "result", "classification", "response", "option", "choice", "letter", "correct one",
          "relationship", "classify this as", "classify it as", "classified as", "label this as", "label it as",
          "right one", "best fit", "i would say", "i say", "i would go with", "i will go with", "go with",
          "going with", "my vote", "vote for",
          "choose", "pick", "select", "i think", "i believe", "my pick", "therefore", "thus", "hence",
          "in conclusion", "in summary", "overall", "ultimately", "finally",
          # an elimination's answer (A and C do not fit, which leaves B)
          "which leaves", "that leaves", "this leaves", "leaves only", "leaves us with", "which leaves us with",
          "that leaves us with", "this leaves us with", "left with",
          "remaining option", "only remaining", "the remaining one"),
    copulas=("is", "are", "was", "be", "would be", "will be", "should be", "must be", "=", "→", "->", "=>"),
    negations=("not", "no", "nope", "never", "cannot", "nor", "neither", "none", "nothing", "nobody", "rather than",
               "instead of", "unlike", "as opposed to", "hardly", "without"),
    questions=("whether",),
    reasons=("because", "since", "as", "given", "due to", "for the reason"),
    subjects=("it", "this", "that", "hypothesis", "the statement", "the claim", "the sentence", "inference"),
    hedges=("maybe", "perhaps", "possibly", "probably", "likely", "might", "may", "could", "seems", "seem",
            "appears", "appear", "guess", "lean", "leaning", "leans", "tentatively", "presumably", "arguably",
            "partially", "partly", "somewhat", "kind of", "sort of", "more or less", "possible", "plausible",
            "conceivable", "also"),
    conditions=("if", "only if", "unless", "assuming", "provided", "providing", "in case", "suppose", "supposing",
                "only when", "only once", "as long as"),
    contrasts=("but", "however", "although", "though", "yet", "except", "whereas", "nevertheless", "nonetheless"),
    retractions=("actually", "or rather", "wait", "on second thought", "on second thoughts", "on reflection",
                 "correction", "i mean", "scratch that", "let me reconsider", "reconsider", "rethink", "hmm",
                 "no wait", "on further reflection", "upon reflection", "i take that back", "take it back",
                 "never mind", "nevermind", "strike that", "just kidding", "forget that", "disregard that",
                 "ignore that"),
    doubts=("not sure", "unsure", "i am not certain", "not entirely certain", "not confident", "i am uncertain",
            "hard to say", "difficult to say", "hard to tell", "could be wrong", "might be wrong", "may be wrong",
            "cannot be sure", "low confidence", "not 100% sure", "uncertain about my", "it depends", "depends on",
            "depending on"),
    judgements=("incorrect", "wrong", "unlikely", "doubtful", "questionable", "debatable", "a stretch", "mistaken",
                "inaccurate", "invalid", "tempting", "implausible", "a mistake", "an error", "too strong",
                "too weak", "not correct", "not right", "not the answer", "ruled out", "eliminated"),
    affirmations=("correct", "right", "accurate", "yes", "no doubt", "without doubt", "without a doubt",
                  "undoubtedly", "definitely", "certainly", "true", "best", "fits", "fits best", "works best",
                  "matches", "is best", "is the best fit", "the most fitting"),
    joiners=("or", "and", "nor", "either", "versus", "vs", "and/or"),
    items=("premise", "question", "q", "example", "input", "user", "human", "context", "passage", "problem",
           "item", "sentence a", "sentence 1", "next"),
    determiners=("a", "an", "the", "this", "that", "these", "those", "some", "any", "no", "every", "each", "its",
                 "his", "her", "their", "our", "my", "your", "another"),
    revisions=("actually", "wait", "no wait", "on second thought", "on second thoughts", "on reflection",
               "on further reflection", "upon reflection", "upon further reflection", "correction", "scratch that",
               "or rather", "revised answer", "corrected answer", "updated answer", "after reconsidering",
               "after further thought", "after further consideration", "after thinking", "after thinking again",
               "after rethinking", "on closer inspection", "having reconsidered", "let me correct myself",
               "i misread", "i made a mistake", "correcting myself", "re-reading", "rereading"),
    drafts=("initial answer", "first answer", "preliminary answer", "draft answer", "tentative answer", "initially",
            "at first", "first guess", "my first thought", "first impression", "draft"),
)
"""English (``affirmations``' ``true`` reads ``B is true`` for letters; a label word is a label first)."""

LANGUAGES: Mapping[str, AnswerLanguage] = {lang.code: lang for lang in (
    ENGLISH,
    AnswerLanguage(
        "de",
        cues=("antwort", "label", "urteil", "lösung", "ergebnis", "endgültige antwort", "schlussfolgerung", "fazit",
              "option", "auswahl", "buchstabe", "ich wähle", "ich würde sagen", "ich sage", "ich denke", "ich glaube",
              "ich entscheide mich für",
              "daher", "somit", "also",
              "folglich", "insgesamt",
              "bleibt nur", "bleibt nur noch", "bleibt also nur", "übrig bleibt", "bleibt übrig", "verbleibt"),
        copulas=("ist", "lautet", "wäre", "sind"),
        negations=("nicht", "kein", "keine", "keinen", "keiner", "nie", "niemals", "nein", "weder", "statt",
                   "anstatt", "anstelle"),
        questions=("ob",),
        reasons=("weil", "da", "denn", "aufgrund"),
        subjects=("es", "das", "dies", "hypothese", "die aussage", "der satz"),
        hedges=("vielleicht", "wahrscheinlich", "vermutlich", "möglicherweise", "eventuell", "eher", "scheint",
                "wohl", "womöglich", "könnte", "dürfte"),
        conditions=("wenn", "falls", "sofern", "nur wenn", "vorausgesetzt"),
        contrasts=("aber", "jedoch", "allerdings", "obwohl", "sondern", "dennoch", "trotzdem"),
        retractions=("eigentlich", "oder besser", "moment", "warte", "korrektur", "genauer gesagt",
                     "bei genauerer betrachtung", "ich nehme das zurück", "nehme das zurück", "vergiss es",
                     "vergessen sie das", "streich das", "nur ein scherz", "war ein scherz", "kleiner scherz"),
        doubts=("nicht sicher", "unsicher", "schwer zu sagen", "nicht ganz sicher", "könnte mich irren",
                "nicht so sicher", "kommt darauf an", "hängt davon ab", "abhängig davon"),
        judgements=("unwahrscheinlich", "fraglich", "zweifelhaft", "unrichtig", "inkorrekt", "fehlerhaft",
                    "nicht richtig", "nicht korrekt"),
        affirmations=("richtig", "korrekt", "ja", "zweifellos", "ohne zweifel", "eindeutig", "zutreffend"),
        joiners=("oder", "und", "bzw", "beziehungsweise", "noch"),
        items=("prämisse", "frage", "beispiel", "satz a", "eingabe", "kontext", "aufgabe"),
        determiners=("ein", "eine", "einen", "einem", "einer", "eines", "der", "die", "das", "dem", "den", "des",
                     "kein", "keine", "dieser", "diese", "dieses"),
        revisions=("eigentlich", "moment", "warte", "korrektur", "bei genauerer betrachtung", "oder besser",
                   "nach nochmaliger überlegung", "nach reiflicher überlegung", "korrigierte antwort",
                   "überarbeitete antwort", "genauer gesagt", "ich korrigiere mich", "ich habe mich verlesen"),
        drafts=("erste antwort", "vorläufige antwort", "zunächst", "anfangs", "erster eindruck", "entwurf"),
    ),
    AnswerLanguage(
        "es",
        cues=("respuesta", "etiqueta", "juicio", "resultado", "respuesta final", "conclusión", "opción", "elección",
              "letra", "elijo", "elegiría", "diría", "yo diría", "diría que", "creo que", "pienso que", "escojo",
              "me quedo con", "por lo tanto",
              "así que", "entonces",
              "en conclusión", "en resumen",
              "queda", "solo queda", "sólo queda", "queda solo", "queda sólo", "nos queda", "lo que deja",
              "lo que nos deja"),
        copulas=("es", "sería", "será"),
        negations=("no", "nunca", "ni", "tampoco", "ningún", "ninguna", "ninguno", "en lugar de", "en vez de"),
        questions=("acaso",),
        reasons=("porque", "ya que", "pues", "dado que", "puesto que", "debido a"),
        subjects=("esto", "eso", "la hipótesis", "la afirmación", "la oración"),
        hedges=("quizás", "quizá", "tal vez", "probablemente", "posiblemente", "parece", "podría", "a lo mejor"),
        conditions=("si", "solo si", "sólo si", "siempre que", "a menos que", "en caso de", "salvo que"),
        contrasts=("pero", "sin embargo", "aunque", "excepto", "sino", "no obstante"),
        retractions=("en realidad", "o mejor dicho", "mejor dicho", "espera", "corrección", "pensándolo bien",
                     "retiro lo dicho", "lo retiro", "olvídalo", "olvida eso", "no importa", "es broma", "era broma",
                     "tacha eso"),
        doubts=("no estoy seguro", "no estoy segura", "difícil de decir", "difícil saber", "no lo sé con certeza",
                "no estoy del todo seguro", "no estoy del todo segura", "no estoy muy seguro", "no estoy muy segura",
                "podría equivocarme", "depende"),
        judgements=("incorrecto", "incorrecta", "equivocado", "equivocada", "improbable", "dudoso", "dudosa",
                    "discutible", "erróneo", "errónea"),
        affirmations=("correcto", "correcta", "sí", "sin duda", "sin lugar a dudas", "acertado", "acertada"),
        joiners=("o", "u", "y", "e"),
        items=("premisa", "pregunta", "ejemplo", "oración a", "contexto", "entrada"),
        determiners=("un", "una", "unos", "unas", "el", "la", "los", "las", "este", "esta", "ese", "esa"),
        revisions=("en realidad", "espera", "corrección", "pensándolo bien", "mejor dicho", "o mejor dicho",
                   "tras reflexionar", "después de reflexionar", "respuesta corregida", "respuesta revisada",
                   "me corrijo", "releyendo"),
        drafts=("respuesta inicial", "primera respuesta", "respuesta preliminar", "inicialmente", "al principio",
                "en un principio", "borrador"),
    ),
    AnswerLanguage(
        "fr",
        cues=("réponse", "étiquette", "jugement", "résultat", "réponse finale", "conclusion", "option", "choix",
              "lettre", "je choisis", "je choisirais", "je dirais", "je dirais que", "je pense que", "je crois que",
              "je réponds",
              "donc", "ainsi", "en conclusion", "en résumé",
              "il reste", "reste donc", "il ne reste que", "ne reste que", "ne reste donc que", "ne reste plus que",
              "ce qui laisse", "ce qui nous laisse"),
        copulas=("est", "serait", "sont", "c'est"),
        negations=("pas", "non", "ne", "n'", "jamais", "ni", "aucun", "aucune", "plutôt que", "au lieu de"),
        questions=("est-ce",),
        reasons=("car", "parce", "puisque", "étant donné"),
        subjects=("cela", "ceci", "c'est", "l'hypothèse", "l'affirmation", "la phrase"),
        hedges=("peut-être", "probablement", "sans doute", "semble", "possiblement", "vraisemblablement", "plutôt",
                "pourrait", "il se peut"),
        conditions=("si", "seulement si", "à condition", "à moins", "sauf si", "selon que"),
        contrasts=("mais", "cependant", "pourtant", "bien que", "quoique", "toutefois", "néanmoins"),
        retractions=("en fait", "ou plutôt", "attendez", "attends", "correction", "en réalité", "à la réflexion",
                     "je retire ce que j'ai dit", "je retire ça", "je retire", "oublie ça", "oubliez ça",
                     "laisse tomber", "je plaisante", "c'était une blague", "je rigole"),
        doubts=("pas sûr", "pas sûre", "pas certain", "pas certaine", "incertain", "difficile à dire",
                "pas tout à fait sûr", "pas tout à fait sûre", "pas vraiment sûr", "pas vraiment sûre",
                "je pourrais me tromper", "ça dépend", "cela dépend", "dépend de"),
        judgements=("incorrect", "incorrecte", "improbable", "douteux", "douteuse", "discutable", "erroné",
                    "erronée", "inexact", "inexacte"),
        affirmations=("correct", "correcte", "juste", "bonne", "oui", "sans aucun doute", "exact", "exacte"),
        joiners=("ou", "et", "soit"),
        items=("prémisse", "question", "exemple", "phrase a", "contexte", "entrée"),
        determiners=("un", "une", "le", "la", "les", "l'", "des", "ce", "cet", "cette", "ces"),
        revisions=("en fait", "attendez", "attends", "correction", "à la réflexion", "ou plutôt", "en réalité",
                   "après réflexion", "tout bien réfléchi", "réponse corrigée", "réponse révisée", "je me corrige",
                   "en relisant"),
        drafts=("réponse initiale", "première réponse", "réponse provisoire", "initialement", "au départ",
                "au début", "brouillon"),
    ),
    AnswerLanguage(
        "zh",
        cues=("答案", "回答", "答", "标签", "结论", "判断", "最终答案", "正确答案", "选项", "选择", "选", "所以",
              "因此", "综上", "总之", "我认为", "我觉得", "认为", "剩下", "只剩", "只剩下", "剩余"),
        copulas=("是", "为", "為", "应该是", "应是"),
        negations=("不是", "不为", "不為", "并非", "並非", "没有", "沒有", "未必", "不一定", "而不是", "并不",
                   "不能", "不会", "不认为", "不觉得", "不相信", "不同意", "不应该", "否", "不太对"),
        questions=("吗", "嗎", "是否", "呢"),
        reasons=("因为", "因為", "由于", "由於", "鉴于"),
        particles=("的", "了", "啊", "呀"),
        subjects=("这", "这个", "假设", "该假设", "这个假设", "陈述"),
        hedges=("也许", "也許", "可能", "大概", "或许", "或許", "似乎", "好像", "估计", "倾向于"),
        conditions=("如果", "假如", "若", "只有", "除非", "要是", "前提是", "否则"),
        contrasts=("但", "但是", "不过", "然而", "可是", "虽然", "尽管"),
        retractions=("其实", "等等", "更正", "应该说", "不对", "不，", "修正", "我收回", "收回", "算了", "开玩笑的",
                     "开个玩笑", "划掉", "当我没说"),
        doubts=("不太确定", "不敢肯定", "很难说", "说不准", "没把握", "我不确定", "不能确定", "取决于", "看情况",
                "不是很确定", "不太肯定", "没有把握"),
        judgements=("错误", "不正确", "不太可能", "值得怀疑", "站不住", "不成立"),
        affirmations=("正确", "是的", "毫无疑问", "无疑", "没错", "最合适", "最恰当"),
        joiners=("或", "或者", "还是", "還是", "和", "与", "與", "及"),
        items=("前提", "问题", "問題", "题目", "例子", "示例", "句子"),
        revisions=("其实", "等等", "更正", "修正", "应该说", "再想想", "仔细想想", "重新考虑", "重新思考",
                   "修改后的答案", "修正后的答案", "我看错了"),
        drafts=("初步答案", "最初的答案", "初始答案", "起初", "一开始", "最初", "草稿"),
    ),
    AnswerLanguage(
        "ja",
        cues=("答え", "回答", "解答", "答", "ラベル", "判断", "結論", "正解", "選択肢", "最終的な答え", "選ぶ",
              "よって", "したがって", "従って", "つまり", "残る", "残りは", "残った"),
        copulas=("は", "が", "とは"),
        negations=("ない", "ではない", "じゃない", "ません", "違う", "違い", "ではなく", "いいえ", "無い"),
        questions=("ですか", "でしょうか", "かな", "かどうか", "のか", "か?"),
        reasons=("から", "ので", "なぜなら", "ため"),
        particles=("です", "だ", "である", "でした", "と"),
        subjects=("これ", "それ", "仮説", "この仮説"),
        hedges=("かも", "かもしれ", "かもしれません", "かもしれない", "おそらく", "多分", "たぶん", "だろう",
                "でしょう", "恐らく", "ようです", "みたい"),
        conditions=("もし", "なら", "ならば", "場合", "限り", "とすれば"),
        contrasts=("しかし", "けど", "けれど", "ただし", "でも", "ただ"),
        retractions=("いや", "実は", "待って", "訂正", "というか", "やっぱり", "撤回", "取り消し", "取り消します",
                     "今のなし", "冗談です", "冗談", "なんでもない", "忘れてください"),
        doubts=("自信がない", "確信がない", "断言できない", "断言できません", "よく分かりません", "はっきりしない",
                "確信はありません", "確信が持てません", "自信はありません", "自信がありません", "確信が持てない",
                "次第"),
        judgements=("間違い", "不正解", "疑わしい", "考えにくい"),
        affirmations=("正解", "はい", "間違いない", "間違いなく", "正しい", "を選びます", "を選ぶ", "を選択します",
                      "が適切", "が最適"),
        joiners=("または", "又は", "もしくは", "や"),
        items=("前提", "質問", "問題", "例"),
        revisions=("実は", "待って", "訂正", "やっぱり", "考え直すと", "見直すと", "よく考えると", "修正後の答え",
                   "訂正後の答え", "読み違えました"),
        drafts=("最初の答え", "暫定的な答え", "初めは", "最初は", "当初は", "下書き"),
    ),
)}
"""The answer languages built in, by code; a suite adds words of its own (``extended``) and
gives all of them for a language not here (``suite_language``)."""


INFLECTIONS: Mapping[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    # French adjectives agree in gender and number (La réponse est fausse, L'hypothèse est vraie).
    "fr": (("eux", ("euse", "euses")), ("ux", ("usse", "usses")), ("if", ("ive", "ifs", "ives")),
           ("é", ("ée", "és", "ées")), ("e", ("es",)), ("", ("e", "s", "es"))),
    # Spanish too (La hipótesis es falsa, La afirmación es verdadera).
    "es": (("o", ("a", "os", "as")), ("e", ("es",))),
    # German adjectives take case endings before a noun or standing for one (eine falsche, das Wahre).
    "de": (("e", ("er", "es", "en", "em")), ("", ("e", "er", "es", "en", "em"))),
}
"""A built-in language's inflections of a label word (ending → the endings that replace it; the first
ending a word has applies): a suite declares ``vrai``, ``falso`` or ``wahr`` and the reader reads
``vraie``, ``falsa``, ``wahre`` too (``inflected``)."""


def inflected(code: str, word: str) -> tuple[str, ...]:
    """The inflected forms of the label word ``word`` in the built-in language ``code`` (none for a
    phrase, a word with a capital, digits or marks, or a language without inflections here).
    """
    if not word.isalpha() or not word.islower() or len(word) < 3:
        return ()
    for ending, endings in INFLECTIONS.get(code, ()):
        if word.endswith(ending):
            stem = word[:len(word) - len(ending)]
            return tuple(stem + e for e in endings)
    return ()


def language(code: str) -> AnswerLanguage:
    """The built-in answer language ``code``; an unknown one is a one-line ``UnknownNameError``."""
    if code not in LANGUAGES:
        raise UnknownNameError("answer language", code, LANGUAGES)
    return LANGUAGES[code]


def suite_language(code: str, words: Mapping[str, Sequence[str]]) -> AnswerLanguage:
    """The answer language ``code`` with a suite's own ``words`` (kind → words, ``WORD_KINDS``).

    A language lingdiag has no words for (``ru``, ``ko``, ``ar``) is built from ``words`` alone,
    which must then hold ``NEEDED``: never read with another language's cues alone.

    Raises:
        ConfigError: no built-in words for ``code`` and some of ``NEEDED`` not given.
    """
    given = {kind: tuple(ws) for kind, ws in words.items() if ws}
    if code in LANGUAGES:
        return LANGUAGES[code].extended(given)
    missing = [kind for kind in NEEDED if kind not in given]
    if missing:
        raise ConfigError(f"language {code!r}: lingdiag has no answer words for it (built in: "
                          f"{', '.join(LANGUAGES)}); give its {' and '.join(missing)} (and, if it has them, "
                          f"{', '.join(k for k in WORD_KINDS if k not in NEEDED)})")
    return AnswerLanguage(code, **given)


_TAKING_BACK = frozenset({"negations", "questions", "hedges", "conditions", "contrasts", "retractions", "doubts",
                          "judgements"})


def _clashes(kind: str, own: set[str]) -> bool:
    """Whether another language's word of ``kind`` contradicts the jobs ``own`` the answer's language
    gives it: one of them takes an answer back and the other does not.
    """
    return bool(own) and kind not in own and (kind in _TAKING_BACK) != bool(own & _TAKING_BACK)


@lru_cache(maxsize=256)
def reading_words(lang: AnswerLanguage) -> AnswerLanguage:
    """The words an answer in ``lang`` is read with: its own and every built-in language's; where one
    of its own words takes an answer back in one language and not in the other, the answer's
    language decides (German ``also``, "so", is a cue in a German answer, English's hedge in an
    English one).
    """
    kinds = [f.name for f in fields(AnswerLanguage) if f.name != "code"]
    own: dict[str, set[str]] = {}
    for kind in kinds:
        for w in getattr(lang, kind):
            own.setdefault(w.lower(), set()).add(kind)
    merged = {kind: tuple(dict.fromkeys(w.lower() for other in (lang, *LANGUAGES.values())
                                        for w in getattr(other, kind)
                                        if other is lang or not _clashes(kind, own.get(w.lower(), set()))))
              for kind in kinds}
    return AnswerLanguage(lang.code, **merged)
