"""What only one paper's report needs: its special figures and the claim checks that need code.

One module per study (``drnn``, ``elstm``, ``pru``, ...); a study's YAML names a check here as
``{kind: python, function: <module>:<Class>}``.
"""
