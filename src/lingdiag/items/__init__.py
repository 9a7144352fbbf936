"""Items as evidence: item response models over the models × items matrices of runs and studies.

Modules: ``matrix`` (runs and study directories → one models × items matrix per suite and condition), ``irt``
(1PL and 2PL by marginal maximum likelihood: EM over Gauss–Hermite quadrature), ``human`` (human ratings
beside the gold label), ``flags`` (items that cannot be trusted, with reasons), ``fitted`` (the frozen fit,
saved as ``fit.json`` + ``fit.npz``), ``tables`` (``items.csv``/``models.csv`` and Parquet), ``selection``
(anchor items and the p-IRT estimate), ``validate`` (leave-one-model-out error), ``anchors`` (anchor files,
``--items``), ``build`` (``items fit`` end to end), ``section`` (the study report's "Items" section and the
viewer's item columns), ``chance`` (flags tested against what the fitted model itself gives by chance),
``text`` (an item's text and gold beside its numbers; runs over two versions of one dataset refused).
"""
