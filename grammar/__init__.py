"""treesens.grammar"""
