"""What only one paper's report needs: its special figures and tables.

One module per study (``drnn``, ``elstm``, ``pru``, ...), whose functions a study's notebook
passes to ``report.section``. The claim checks that need code are :mod:`rnnrepro.claims.papers`.
"""
