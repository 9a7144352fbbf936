"""From diagnosis to treatment: training data, leakage and licence guards, steering vectors, LoRA.

``data`` builds training items from a suite's own generator and splits them by lemma;
``training`` assembles the guarded training set; ``examples`` turns items into chat examples;
``guards`` refuses training sets that leak into the evaluation set or whose licence forbids
training; ``steer`` computes contrastive steering vectors; ``lora`` trains LoRA adapters;
``rediagnosis`` tests adapted runs against their base run, written out by
``rediagnosis_tables`` and ``sweep_figure``. The adapted model is applied at inference by
``lingdiag.models.hf.adapters``.
"""
