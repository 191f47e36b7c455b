"""A two-layer graph convolutional network as pygcn writes it (Kipf & Welling): features through
``torch.mm``, the row-normalized adjacency with self-loops as a sparse COO tensor built from a SciPy matrix,
``torch.spmm``, log-softmax and NLL on the training nodes, Adam with weight decay. (pygcn makes its
parameters with ``torch.FloatTensor(n, m)``; ``torch.Tensor(n, m)`` here, so that they take the default dtype.)"""
import math

import numpy as np
import scipy.sparse as sp
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.parameter import Parameter

STEPS = 4
n_nodes, n_feat, n_hid, n_class = 20, 6, 8, 3


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(torch.Tensor(in_features, out_features))
        if bias:
            self.bias = Parameter(torch.Tensor(out_features))
        else:
            self.register_parameter('bias', None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        support = torch.mm(input, self.weight)
        output = torch.spmm(adj, support)
        if self.bias is not None:
            return output + self.bias
        return output


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        x = self.gc2(x, adj)
        return F.log_softmax(x, dim=1)


def normalize(mx):
    """Row-normalize sparse matrix"""
    rowsum = np.array(mx.sum(1))
    r_inv = np.power(rowsum, -1).flatten()
    r_inv[np.isinf(r_inv)] = 0.
    r_mat_inv = sp.diags(r_inv)
    return r_mat_inv.dot(mx)


def sparse_mx_to_torch_sparse_tensor(sparse_mx):
    """Convert a scipy sparse matrix to a torch sparse tensor."""
    sparse_mx = sparse_mx.tocoo()
    indices = torch.from_numpy(np.vstack((sparse_mx.row, sparse_mx.col)).astype(np.int64))
    values = torch.from_numpy(sparse_mx.data)
    shape = tuple(sparse_mx.shape)
    return torch.sparse_coo_tensor(indices, values, shape)


def make_model():
    return GCN(nfeat=n_feat, nhid=n_hid, nclass=n_class, dropout=0.5)


def make_data(rng):
    edges = rng.integers(0, n_nodes, size=(40, 2))
    return {"edges": edges, "features": rng.standard_normal((n_nodes, n_feat)),
            "labels": rng.integers(0, n_class, n_nodes)}


def train(model, data, steps, after_backward=None):
    edges = data["edges"]
    adj = sp.coo_matrix((np.ones(edges.shape[0]), (edges[:, 0], edges[:, 1])), shape=(n_nodes, n_nodes))
    adj = adj + adj.T.multiply(adj.T > adj) - adj.multiply(adj.T > adj)   # symmetric
    adj = normalize(adj + sp.eye(adj.shape[0]))
    adj = sparse_mx_to_torch_sparse_tensor(adj)
    features = torch.from_numpy(data["features"])
    labels = torch.LongTensor(data["labels"])
    idx_train = torch.LongTensor(range(12))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    model.eval()   # dropout off, so that both libraries compute the same function
    losses = []
    for epoch in range(steps):
        optimizer.zero_grad()
        output = model(features, adj)
        loss_train = F.nll_loss(output[idx_train], labels[idx_train])
        loss_train.backward()
        if after_backward is not None:
            after_backward(epoch)
        optimizer.step()
        losses.append(loss_train.item())
    return losses
