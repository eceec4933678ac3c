"""treesens.compiler"""
