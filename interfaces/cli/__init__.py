"""treesens.interfaces.cli"""
